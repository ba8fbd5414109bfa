"use strict";
// Same word's own part, served after the turn rooms' (SameWordRoom.scripts): the thing to name, drawn large,
// in place of the turn rooms' table of the item's fields. Text only, never markup (h() sets textContent).
adapters[state.protocol].task = (item) => item
  ? h("p", { class: "thing", id: "thing" }, "Name this: ", h("strong", {}, String(item.thing || "")))
  : null;
