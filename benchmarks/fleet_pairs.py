"""A build judged across a fleet: one run a side on each of ten machines.

Ten machine identities, each a distinct machine fingerprint (a host of its own: every run is
a real `pqbench speed` process started in a UTS namespace of its own with its own host
name, `unshare --uts`, so pqbench records that name), measure two builds once each:

* ``change``: the build before, and the build after with a real knob turned: OpenSSL's
  capability vector hiding ADX and BMI2 (``--mask adx,bmi2``, recorded in the fingerprint
  as knobs.OPENSSL_ia32cap). On CPUs with both, libcrypto's P-256 field arithmetic and
  X25519 lose their MULX/ADCX paths: about 10 % slower ECDSA-P-256 verification and about
  20-25 % slower X25519 derivation on the development VM (an `ab` session measures it);
  Ed25519 signing does not use them and is the control;
* ``aa``: the same build twice (A/A): no row may be called faster or slower.

Each machine runs its two builds back to back, in an order a coin decides per machine, so
drift over the session falls on both builds alike. With ``--together`` it runs them at the
same time instead (with ``--cpu 0``, time-sliced on one vCPU, each run timed in its own
CPU time): on a VM whose speed drifts between two runs seconds apart, that drift then falls
on both runs of a machine alike, as it would on a real machine that holds its speed between
two runs. Then `pqbench compare --by label before after` judges each row by the machines'
pairs (the machine as the unit, Student t over the ten machines' ln ratios), and the same
runs compared one machine alone (one run against one, against the machine's prior spread)
show what a single machine could say.

    python benchmarks/fleet_pairs.py [--machines 10] [--seconds 1] [--rounds 5] [--cpu 0]
        [--together] [--knob adx,bmi2] [--json]

A benchmark script, not a test: it asserts nothing; it prints what compare says, with the
load, and keeps its store under benchmarks/.work/fleet-pairs.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

WORK = Path(__file__).resolve().parent / ".work" / "fleet-pairs"
ALGORITHMS = ("ecdsa-p256", "x25519", "ed25519")
KNOB = "adx,bmi2"


def _speed(host: str, label: str, db: Path, args: argparse.Namespace, mask: str | None
           ) -> subprocess.Popen[str]:
    """One real pqbench run on the machine named `host`, started (`_ended` waits)."""
    argv = [sys.executable, "-m", "pqbench", "speed", *ALGORITHMS, "-i", "libcrypto",
            "--seconds", str(args.seconds), "--rounds", str(args.rounds), "--label", label,
            "--db", str(db), *(("--mask", mask) if mask else ()),
            *(("--cpu", args.cpu) if args.cpu else ())]
    script = 'hostname "$1" && shift && exec "$@"'
    return subprocess.Popen(["unshare", "--uts", "--fork", "sh", "-c", script, "sh", host,
                             *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _ended(host: str, run: subprocess.Popen[str]) -> None:
    _out, err = run.communicate()
    if run.returncode != 0:
        raise SystemExit(f"pqbench speed on {host} failed ({run.returncode}): "
                         f"{err.strip()[-500:]}")


def _compare(db: Path, *names: str) -> dict[str, Any]:
    done = subprocess.run([sys.executable, "-m", "pqbench", "compare", "--by", "label",
                           *names, "--json", "--db", str(db)], capture_output=True, text=True,
                          check=False)
    if done.returncode != 0:
        raise SystemExit(f"compare failed: {done.stderr.strip()[-800:]}")
    return json.loads(done.stdout)


def _one_machine(db: Path, before: str, after: str) -> dict[str, Any]:
    """The first machine's two runs compared alone: one run against one."""
    from pqbench.data.store import Store

    runs = Store.open(str(db), create=False).load_runs()
    host = runs[0].environment.hostname
    ids = [next(r.run_id for r in runs if r.label == label and r.environment.hostname == host)
           for label in (before, after)]
    done = subprocess.run([sys.executable, "-m", "pqbench", "compare", *ids, "--json",
                           "--db", str(db)], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"compare failed: {done.stderr.strip()[-800:]}")
    return json.loads(done.stdout)


def _rows(document: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"row": f"{r['algorithm']} {r['operation']} [{r['implementation']}]",
             "design": r["design"], "machines": r.get("machines"), "ratio": r["ratio"],
             "ci_low": r["ci_low"], "ci_high": r["ci_high"], "verdict": r["verdict"]}
            for r in document["rows"]]


def experiment(name: str, args: argparse.Namespace) -> dict[str, Any]:
    """Ten machines, two builds each (the knob turned or not), then the comparisons."""
    work = WORK / name
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    db = work / "fleet.db"
    coin = random.Random(args.seed)
    load = [os.getloadavg()[0]]
    started = time.time()
    for index in range(args.machines):
        host = f"fleet-m{index:02d}"
        sides = [("before", None), ("after", args.knob if name == "change" else None)]
        coin.shuffle(sides)
        if args.together:  # both at once on the CPUs of --cpu: drift falls on both alike
            started_runs = [_speed(host, label, db, args, mask) for label, mask in sides]
            for run in started_runs:
                _ended(host, run)
        else:
            for label, mask in sides:
                _ended(host, _speed(host, label, db, args, mask))
        load.append(os.getloadavg()[0])
    fleet = _compare(db, "before", "after")
    alone = _one_machine(db, "before", "after")
    return {"experiment": name, "machines": args.machines, "seconds": round(
        time.time() - started), "load": [round(x, 1) for x in load],
            "fleet": _rows(fleet), "fleet_warnings": fleet["warnings"],
            "one_machine": _rows(alone)}


def _show(found: dict[str, Any]) -> None:
    print(f"\n{found['experiment']}: {found['machines']} machines, {found['seconds']} s, "
          f"load {min(found['load'])}-{max(found['load'])}")
    for title, rows in (("across the fleet", found["fleet"]),
                        ("one machine alone", found["one_machine"])):
        print(f"  {title}:")
        for r in rows:
            print(f"    {r['row']:<36} {r['ratio']:.3f} [{r['ci_low']:.3f}-{r['ci_high']:.3f}]"
                  f" {r['verdict']} ({r['design']}"
                  f"{', ' + str(r['machines']) + ' machines' if r['machines'] else ''})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("experiments", nargs="*", metavar="change|aa",
                        help="which to run (default: both)")
    parser.add_argument("--machines", type=int, default=10)
    parser.add_argument("--seconds", type=float, default=1.0)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--cpu", metavar="LIST",
                        help="pin every run to these CPUs (speed --cpu), e.g. 0: each "
                             "machine's two runs then share one vCPU")
    parser.add_argument("--knob", default=KNOB, metavar="FLAGS",
                        help=f"the CPU flags `change` hides from OpenSSL (default {KNOB})")
    parser.add_argument("--together", action="store_true",
                        help="run each machine's two builds at the same time (with --cpu 0: "
                             "time-sliced on one vCPU, each timed in its own CPU time), so "
                             "a VM whose speed drifts between two runs drifts under both")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    unknown = set(args.experiments) - {"change", "aa"}
    if unknown:
        parser.error(f"unknown experiment(s): {', '.join(sorted(unknown))}")
    if shutil.which("unshare") is None:
        raise SystemExit("needs unshare (util-linux) and the right to make a UTS namespace "
                         "(root, or user namespaces): each machine is a host name of its own")
    found = [experiment(name, args) for name in args.experiments or ("change", "aa")]
    if args.json:
        print(json.dumps(found, indent=2))
    else:
        for one in found:
            _show(one)


if __name__ == "__main__":
    main()
