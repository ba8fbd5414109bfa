"""``lexicoord gate``: the agreement gate from the command line.

One function per command; each imports what it needs when it runs, so ``lexicoord --help`` imports none of it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from lexicoord import event_loop
from lexicoord.cli.console import console_for
from lexicoord.cli.options import (
    AllowedHostOption,
    DbOption,
    ForwardedAllowIpsOption,
)
from lexicoord.cli.run_options import RunOptions, run_command

#: Mounted as ``lexicoord gate`` through the gate's protocol entry, as any protocol's commands are.
app = typer.Typer(help="Agreement before action: is an instruction clear, and if not, what to ask.",
                  no_args_is_help=True)
console = console_for(stderr=True)


@app.command("serve")
def serve(
    config: Annotated[
        Path | None, typer.Option("--config", help="A gate configuration (TOML: policy, models, bounds).")
    ] = None,
    host: Annotated[str, typer.Option(help="Address to listen on (0.0.0.0 to let other machines in; then the "
                                           "API needs a key).")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=1, max=65535)] = 8000,
    db: DbOption = None,
    allowed_host: AllowedHostOption = None,
    forwarded_allow_ips: ForwardedAllowIpsOption = None,
) -> None:
    """Serve the gate over HTTP: a JSON API for pipelines, and the page a person answers the gate's questions on.

    On loopback the API needs no key unless LEXICOORD_GATE_KEY is set; on any other address it needs
    LEXICOORD_GATE_KEY, or the key printed at start (Authorization: Bearer KEY).
    """
    from lexicoord.cli.ports import check_port
    from lexicoord.cli.serve_cmd import CONNECTIONS_PER_ADDRESS, run_app
    from lexicoord.gate.gate import Gate
    from lexicoord.gate.http import KEY_ENV, decide_key, gate_app
    from lexicoord.gate.settings import GateSettings, read_settings
    from lexicoord.web.hosts import proxy_addresses, served_hosts

    settings = read_settings(config) if config is not None else GateSettings().check()
    hosts = served_hosts(host, allowed_host or [])
    proxies = proxy_addresses(forwarded_allow_ips)
    gate = Gate(settings=settings, db=db)  # opens the store now (a bad one is one sentence); loads no model yet
    key, made = decide_key(host, proxied=bool(proxies), public_names=bool(allowed_host))
    check_port(host, port)
    app = gate_app(gate, key=key, allowed_hosts=hosts)
    shown = "localhost" if host in ("127.0.0.1", "0.0.0.0", "::") else host
    console.print(f"lexicoord gate ({settings.policy}, {', '.join(settings.models)}): POST http://{shown}:{port}"
                  f"/api/gate/check  (store {gate.store.url}; Ctrl-C stops)", highlight=False, markup=False,
                  soft_wrap=True)
    if made:
        console.print(f"API key (send Authorization: Bearer KEY; set {KEY_ENV} to choose it): {key}",
                      highlight=False, markup=False, soft_wrap=True)
    elif key is None:
        console.print("No API key: the server answers this machine only (set LEXICOORD_GATE_KEY to require one).",
                      highlight=False, markup=False, soft_wrap=True)
    run_app(app, host, port, hosts, proxies, CONNECTIONS_PER_ADDRESS)


@app.command("check")
def check(
    instruction: Annotated[str, typer.Argument(help="The instruction to check.")],
    context: Annotated[str, typer.Option(help="What the pipeline knows of the scene.")] = "",
    candidate: Annotated[
        list[str] | None, typer.Option("--candidate", "-c", help="A reading the instruction may have (repeatable).")
    ] = None,
    config: Annotated[Path | None, typer.Option("--config", help="A gate configuration (TOML).")] = None,
    policy: Annotated[str | None, typer.Option(help="single, debate, coalition, conformal or adaptive.")] = None,
    model: Annotated[list[str] | None, typer.Option("--model", "-m", help="A model seats are filled from.")] = None,
    key: Annotated[str | None, typer.Option(help="An idempotency key: the same key returns the same check.")] = None,
    db: DbOption = None,
) -> None:
    """Check an instruction; a question is put to you at the keyboard. Prints the verdict as JSON.

    Exits 0 only when the verdict is clear (so a shell pipeline can act on it), 1 otherwise.
    """
    from lexicoord.gate.gate import Gate
    from lexicoord.gate.settings import settings_from
    from lexicoord.gate.verdict import Verdict

    settings = settings_from(config, policy, model)

    async def run() -> Verdict:
        async with Gate(settings=settings, db=db) as gate:
            v = await gate.check(instruction, context=context, candidates=candidate or None, key=key)
            while v.status == "ask":
                console.print(f"{v.question}", highlight=False, markup=False)
                for i, option in enumerate(v.options, 1):
                    console.print(f"  {i}. {option}", highlight=False, markup=False)
                said = typer.prompt("Your answer (a number, your own words, or 'no' to refuse)", err=True)
                if said.strip().lower() in ("no", "refuse"):
                    v = await gate.answer(v.gate_id, refuse=True)
                elif said.strip().isdigit() and 1 <= int(said) <= len(v.options):
                    v = await gate.answer(v.gate_id, choice=v.options[int(said) - 1])
                else:
                    v = await gate.answer(v.gate_id, text=said)
            return v

    verdict = event_loop.run(run())
    typer.echo(verdict.model_dump_json(indent=2))
    raise typer.Exit(0 if verdict.clear else 1)


@app.command("calibrate")
def calibrate(
    data: Annotated[str, typer.Argument(help="JSONL (instruction, context, options, answer: the option meant), or a "
                                             "benchmark's calibration split: knowno:PATH or ambik:PATH.")],
    model: Annotated[str, typer.Option("--model", "-m", help="The scorer model.")] = "local/smollm2-135m",
    items: Annotated[int | None, typer.Option(min=2, help="Use the first N calibration items.")] = None,
    success: Annotated[float, typer.Option(min=0.01, max=0.99, help="Target success level (1 - epsilon).")] = 0.8,
    out: Annotated[Path, typer.Option(help="Where to write the gate's configuration.")] = Path("gate.toml"),
) -> None:
    """KnowNo's split-conformal threshold for the conformal check, written into a gate configuration."""
    from lexicoord.gate.calibrate import calibrate as run
    from lexicoord.gate.calibrate import read, write_settings
    from lexicoord.gate.settings import GateSettings

    chosen = read(data)[:items] if items else read(data)
    if len(chosen) < 2:
        from lexicoord.errors import ConfigError

        raise ConfigError(f"{data} gives {len(chosen)} calibration item(s) with options and one meant; need at least 2.")
    result = event_loop.run(run(chosen, model, success))
    write_settings(out, GateSettings(policy="conformal", models=[model], qhat=result.qhat, target_success=success,
                                     calibrated_model=model))
    console.print(f"{result.items} calibration items, target success {success:.0%}: qhat = {result.qhat:.4f}; on "
                  f"these items the set holds the answer {result.coverage:.0%} of the time, mean set size "
                  f"{result.mean_set_size:.2f}. Wrote {out}.", highlight=False, markup=False, soft_wrap=True)


@run_command(app, "eval", concurrency=2, concurrency_help="Checks played at once.")
def evaluate(
    dataset: Annotated[str, typer.Option(help="knowno:PATH (a task file or folder), ambik:PATH (its CSV) or "
                                              "ambik-indirect:PATH.")],
    policy: Annotated[list[str] | None, typer.Option("--policy", "-p", help="A policy to evaluate (repeatable; "
                                                     "default: single and debate).")] = None,
    model: Annotated[list[str] | None, typer.Option("--model", "-m", help="A model seats are filled from "
                                                    "(repeatable).")] = None,
    judge: Annotated[str | None, typer.Option(help="A judge model: is each question about the ambiguous "
                                                   "element?")] = None,
    items: Annotated[int | None, typer.Option(min=1, help="N items, taken in turn from each category.")] = None,
    exclude: Annotated[str | None, typer.Option(help="Leave out the tasks of this source (the one conformal was "
                                                     "calibrated on): knowno:PATH or ambik:PATH.")] = None,
    config: Annotated[Path | None, typer.Option("--config", help="Gate settings (TOML), e.g. the file "
                                                "`gate calibrate` writes with its threshold.")] = None,
    clarifications: Annotated[int, typer.Option(min=1, max=5, help="Questions a check may ask.")] = 1,
    *,
    run: RunOptions,
) -> None:
    """Evaluate gate policies on a benchmark with a simulated person who answers from the item's intent; every
    check is stored and resumes on re-run; the report gives the benchmark's metrics (the experiment file these
    options amount to: --print-file)."""
    from lexicoord.gate.settings import DEFAULT_MODEL, read_settings

    base = read_settings(config).model_dump(exclude_none=True) if config is not None else {}
    seats = model or base.get("models") or [DEFAULT_MODEL]
    keep = ("timeout", "followers", "rounds", "players", "qhat", "target_success", "calibrated_model",
            "min_letter_mass", "first", "then", "sentences")
    settings = {k: v for k, v in base.items() if k in keep} | {"clarifications": clarifications}
    run.launch("gate", models={"seats": list(seats), "judge": judge},
               data={"dataset": dataset, "items": items, "exclude": exclude}, settings=settings,
               grid={"policies": policy or ["single", "debate"]})
