// Same word's part of the room page: registered under the protocol the room plays, drawn by lexicoord's page.
adapters[state.protocol] = {
  render(phaseBox, gameBox) {
    const title = Object.assign(document.createElement("h2"), { id: "same-word-title", textContent: "Same word" });
    phaseBox.replaceChildren(title);
    const line = Object.assign(document.createElement("p"), { id: "same-word-phase" });
    line.textContent = `phase: ${state.phase}` + (state.game && state.game.item ? `; thing: ${state.game.item.thing}` : "");
    gameBox.replaceChildren(line);
  },
  renderStats() {},
};
