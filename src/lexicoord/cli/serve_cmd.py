"""``lexicoord serve``: live web rooms where people and LLM agents play any protocol that has a room."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from lexicoord.cli.console import console_for
from lexicoord.cli.options import (
    AllowedHostOption,
    DbOption,
    ForwardedAllowIpsOption,
    ModelOptions,
    NoCacheOption,
    cache_setting,
    parse_options,
)
from lexicoord.cli.ports import check_port
from lexicoord.errors import ConfigError

if TYPE_CHECKING:
    from lexicoord.gate.http import GatePart
    from lexicoord.runs.store import Store

console = console_for(stderr=True)
#: Minutes a room may stand with no page open (and no game under way) before it closes.
IDLE_MINUTES = 60.0
#: The same for a room no game was ever started in.
UNUSED_MINUTES = 10.0
#: Open rooms, and open connections, one client may have (the server's defaults, web.registry and web.guard).
ROOMS_PER_ADDRESS, CONNECTIONS_PER_ADDRESS = 20, 64


def roomable_protocols() -> list[str]:
    """Every installed protocol with a live-room adapter, in registry order."""
    from lexicoord.core.registry import protocols

    return [name for name, entry in protocols().items() if entry.room]


def serve(
    host: Annotated[str, typer.Option(help="Address to listen on (0.0.0.0 to let other machines in).")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=1, max=65535)] = 8000,
    model: Annotated[
        list[str] | None, typer.Option("--model", "-m", help="A model people may seat agents on (repeatable).")
    ] = None,
    agents: Annotated[int, typer.Option(min=0, max=8, help="Agents the room form proposes by default.")] = 2,
    items: Annotated[
        list[str] | None, typer.Option(
            "--items", help="A set of items a protocol's rooms may draw from: PROTOCOL=WHERE or PROTOCOL/NAME=WHERE "
                            "(coordination=builtin, coordination/plants=plants.jsonl, coordination=wictsv:FOLDER, "
                            "cogent/gsm8k=test.jsonl; repeatable). Without any, each protocol's own default "
                            "(the coordination game's built-in sentences; COGENT: typed questions only).")
    ] = None,
    protocol: Annotated[
        list[str] | None,
        typer.Option("--protocol", help="A protocol people may open rooms for (repeatable; default: every installed "
                                        "protocol that has a live room)."),
    ] = None,
    join_rate: Annotated[
        float, typer.Option(min=0.01, help="Room look-ups and joins per second allowed from one address (burst 30).")
    ] = 2.0,
    allowed_host: AllowedHostOption = None,
    forwarded_allow_ips: ForwardedAllowIpsOption = None,
    close_idle_after: Annotated[
        float, typer.Option(min=0, help="Minutes a room may stand with no page open before it closes (0: never).")
    ] = IDLE_MINUTES,
    close_unused_after: Annotated[
        float, typer.Option(min=0, help="Minutes a room no game was ever started in may stand with no page open "
                                        "before it closes (0: as any other room).")
    ] = UNUSED_MINUTES,
    rooms_per_address: Annotated[
        int, typer.Option(min=1, help="Open rooms one client (an IPv4 address, an IPv6 /64) may have created.")
    ] = ROOMS_PER_ADDRESS,
    connections_per_address: Annotated[
        int, typer.Option(min=1, help="Connections one client (an IPv4 address, an IPv6 /64) may hold open; a "
                                      "proxy named with --forwarded-allow-ips is not held to it.")
    ] = CONNECTIONS_PER_ADDRESS,
    gate_config: Annotated[
        Path | None,
        typer.Option("--gate-config", help="The agreement gate's configuration (TOML), served at /api/gate; by "
                                           "default the gate's own defaults (its model loads at the first check)."),
    ] = None,
    db: DbOption = None,
    no_cache: NoCacheOption = False,
    option: ModelOptions = None,
) -> None:
    """Serve live rooms; open the printed address in a browser, create a room, and share its link."""
    from lexicoord.models.pool import ModelPool
    from lexicoord.runs.store import Store
    from lexicoord.web.app import create_app
    from lexicoord.web.hosts import proxy_addresses, served_hosts
    from lexicoord.web.services import Services

    hosts = served_hosts(host, allowed_host or [])
    proxies = proxy_addresses(forwarded_allow_ips)
    models = model or ["local/smollm2-135m"]
    pool = ModelPool(cache=cache_setting(no_cache), **parse_options(option))
    for name in models:
        pool.get(name)  # a missing key or unknown provider is one clear error now, not in every room
    if len(set(models)) != len(models):
        raise ConfigError("A model is named twice with --model.")
    offered = protocol or roomable_protocols()
    from lexicoord.core.items import load_items

    services = Services(store=Store(db), models=pool, model_names=models, default_agents=agents, protocols=offered,
                        items=load_items(offered, items or []))
    for name in offered:
        services.adapter(name)  # a protocol without a room is one clear error now
    gate, made = gate_part(gate_config, services.store, host, proxied=bool(proxies), public_names=bool(allowed_host))
    check_port(host, port)  # a port in use is one sentence now, not uvicorn's errno after the start-up lines
    app = create_app(services, http_rate=join_rate, allowed_hosts=hosts, idle_close=close_idle_after * 60 or None,
                     unused_close=close_unused_after * 60 or None, rooms_per_address=rooms_per_address, parts=[gate])
    shown = "localhost" if host in ("127.0.0.1", "0.0.0.0", "::") else host
    console.print(f"lexicoord live: http://{shown}:{port}/  (store {services.store.url}; Ctrl-C stops, rooms reopen)",
                  highlight=False, markup=False, soft_wrap=True)  # the address whole on its line, in a log too
    if made:
        from lexicoord.gate.http import KEY_ENV

        console.print(f"agreement gate API (/api/gate) key, sent as Authorization: Bearer KEY (set {KEY_ENV} to "
                      f"choose it): {gate.key}", highlight=False, markup=False, soft_wrap=True)
    run_app(app, host, port, hosts, proxies, connections_per_address)


def gate_part(config: Path | None, store: Store, host: str, *, proxied: bool = False,
              public_names: bool = False) -> tuple[GatePart, bool]:
    """The agreement gate beside the rooms, on the same store (its models load at its first check), and whether
    its API key was made up now (to be printed once). The key is needed off loopback, behind a proxy or under a
    public host name, or whenever LEXICOORD_GATE_KEY is set (:func:`lexicoord.gate.http.decide_key`)."""
    from lexicoord.gate.gate import Gate
    from lexicoord.gate.http import GatePart, decide_key
    from lexicoord.gate.settings import GateSettings, read_settings

    settings = read_settings(config) if config is not None else GateSettings().check()
    key, made = decide_key(host, proxied=proxied, public_names=public_names)
    return GatePart(Gate(settings=settings, store=store), key=key), made


def run_app(app: Any, host: str, port: int, hosts: list[str], proxies: list[str], connections_per_address: int) -> None:
    """Serve ``app`` with uvicorn, guarded (:mod:`lexicoord.web.guard`), until Ctrl-C."""
    import uvicorn

    from lexicoord.collector import tune_for_long_runs
    from lexicoord.web.guard import ConnectionGuard, connection_budget
    from lexicoord.web.hosts import EVERY_INTERFACE
    from lexicoord.web.messages import MAX_MESSAGE

    # uvicorn bounds neither how long a request may take to arrive nor how many connections a client holds
    # (lexicoord.web.guard does, in the HTTP protocol). Its limit_concurrency is not used: it counts
    # half-sent connections too, and answers everyone else 503 once they fill it.
    guard = ConnectionGuard(per_address=connections_per_address, total=connection_budget(), trusted=proxies)
    http_protocol, ws_protocol = guard.protocols()
    console.print(f"answering to: {', '.join(hosts)}"
                  + ("; name the others people use with --allowed-host" if host in EVERY_INTERFACE else ""),
                  highlight=False, markup=False, soft_wrap=True)
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", http=http_protocol, ws=ws_protocol,
                            timeout_keep_alive=5, ws_max_size=MAX_MESSAGE * 4,
                            # A page that stops answering pings (gone without closing) is let go in 40 s.
                            ws_ping_interval=20, ws_ping_timeout=20,
                            # Room states are a few kB: compressing every one cost a third of the event
                            # loop under load (benchmarks/web_latency.py) for bytes no link here misses.
                            ws_per_message_deflate=False,
                            # A stop waits at most 2 s for requests in flight (a study page's long poll waits
                            # 25 s), so the rooms and studies close, and their state is saved, at once.
                            timeout_graceful_shutdown=2,
                            # A client's address is the peer's, unless the peer is a proxy the operator named.
                            proxy_headers=bool(proxies), forwarded_allow_ips=proxies or None)
    tune_for_long_runs()

    class Server(uvicorn.Server):
        async def shutdown(self, sockets: Any = None) -> None:
            """Tell the app's parts the server is stopping before uvicorn waits for the requests in flight."""
            for stopping in getattr(app.state, "stopping", []):
                stopping()
            await super().shutdown(sockets)

    Server(config).run()
