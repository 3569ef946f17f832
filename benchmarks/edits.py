"""How often the edit tools apply what a model meant, over the shared edit corpus.

    python benchmarks/edits.py [--corpus PATH] [--verbose]

Runs edit_file (search/replace edits) and patch_file (unified diffs, Codex patches) over every
case, and, for comparison, a naive exact-match applier (plain str.replace / exact hunk text).
Prints per format: cases, applied correctly, refused, wrong content, skipped; and which cases did
not pass. The default corpus is ../shared/corpus/edits beside the checkout.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from edit_corpus import CaseResult, case_folders, run_case, summarise

DEFAULT_CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "edits"
COLUMNS = ("cases", "correct", "kept-whitespace", "refused", "wrong", "skipped", "parsed", "passed")


def table(title: str, results: list[CaseResult]) -> None:
    rows = summarise(results)
    print(f"\n{title}")
    widths = [max(9, len(c) + 2) for c in COLUMNS]
    print(f"  {'format':<22}" + "".join(f"{c:>{w}}" for c, w in zip(COLUMNS, widths, strict=True)))
    for name in sorted(rows, key=lambda n: (n == "all", n)):
        print(
            f"  {name:<22}"
            + "".join(f"{rows[name][c]:>{w}}" for c, w in zip(COLUMNS, widths, strict=True))
        )


VERDICTS = ("correct", "refused", "partial", "WRONG", "crashed")


def generated(verbose: bool) -> None:
    """Per mistake kind and applier: how many cases ended in each verdict."""
    import time

    from edit_mistakes import APPLIERS, cases, changes, run

    tally: dict[tuple[str, str], dict[str, int]] = {}
    all_cases = [case for change in changes() for case in cases(change)]
    projects = sorted({case.change.project for case in all_cases})
    print(
        f"\ngenerated from real releases ({', '.join(projects)}): "
        f"{len({(c.change.project, c.change.path) for c in all_cases})} changes, "
        f"{len(all_cases)} cases"
    )
    seconds: dict[str, float] = {}
    for name, applier in APPLIERS.items():
        started = time.perf_counter()
        for case in all_cases:
            verdict = run(case, applier)
            if not verdict:
                continue
            row = tally.setdefault((case.kind, name), dict.fromkeys(VERDICTS, 0))
            row[verdict] += 1
            if verbose and name == "heph" and verdict in ("WRONG", "crashed", "partial"):
                print(f"    {verdict}: {case.kind}: {case.change.project} {case.change.path}")
        seconds[name] = time.perf_counter() - started
    kinds = sorted({kind for kind, _ in tally}, key=lambda k: (not k.startswith("edit"), k))
    header = f"  {'mistake':<52}{'applier':<16}" + "".join(f"{v:>9}" for v in VERDICTS)
    print(header)
    for kind in kinds:
        for name in APPLIERS:
            row = tally.get((kind, name))
            if row:
                print(f"  {kind:<52}{name:<16}" + "".join(f"{row[v]:>9}" for v in VERDICTS))
    for family in ("edit", "diff"):
        for name in APPLIERS:
            rows = [r for (k, n), r in tally.items() if n == name and k.startswith(family)]
            total = sum(sum(r.values()) for r in rows)
            if total:
                share = {v: sum(r[v] for r in rows) for v in VERDICTS}
                print(
                    f"  all {family} cases, {name}: {total} cases, "
                    + ", ".join(
                        f"{v} {share[v]} ({100 * share[v] / total:.1f}%)"
                        for v in VERDICTS
                        if share[v]
                    )
                )
    print("  time per applier: " + ", ".join(f"{n} {s:.1f} s" for n, s in seconds.items()))


def timing() -> None:
    """How long an edit takes in a 10,000-line file: a 50-line hunk or snippet that is not
    there (refused, with the closest lines quoted) and one that is (applied)."""
    import statistics
    import sysconfig
    import time

    from hephaistus.tools.editing.matching import NoMatch
    from hephaistus.tools.editing.patching import PatchError, apply_hunks, parse_patch
    from hephaistus.tools.editing.replacing import replace

    source = Path(sysconfig.get_paths()["stdlib"])
    lines: list[str] = []
    for path in sorted(source.glob("*.py")):
        lines += path.read_text(encoding="utf-8", errors="replace").splitlines()
        if len(lines) >= 10_000:
            break
    lines = lines[:10_000]
    present = lines[5_000:5_050]
    absent = [line.replace("self", "this") + "  # not here" for line in present]
    diff = "@@ ... @@\n" + "".join(f" {line}\n" for line in absent[:-1]) + f"-{absent[-1]}\n+x\n"

    def median_ms(work: object) -> float:
        samples = []
        for _ in range(5):
            started = time.perf_counter()
            try:
                work()  # type: ignore[operator]
            except (NoMatch, PatchError):
                pass
            samples.append((time.perf_counter() - started) * 1000)
        return statistics.median(samples)

    hunks = parse_patch(diff)[0].hunks
    shifted = ["    " + line for line in present]
    inserted = shifted[:25] + ["    x = 1"] + shifted[25:]
    print("\nin a 10,000-line file (standard library source), median of 5:")
    for label, work in (
        ("patch_file refusing a 50-line hunk", lambda: apply_hunks(lines, hunks)),
        ("edit_file refusing a 50-line snippet", lambda: replace(lines, absent, ["x"])),
        ("edit_file applying one, shifted by 4", lambda: replace(lines, shifted, inserted)),
    ):
        print(f"  {label:<40}{median_ms(work):6.1f} ms")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--verbose", action="store_true", help="list every case")
    parser.add_argument(
        "--generated",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="also the edits generated from real releases (downloads them once)",
    )
    args = parser.parse_args()
    cases = args.corpus / "cases"
    if not cases.is_dir():
        print(
            f"no edit corpus at {args.corpus} (expected cases/ and extended/ there); "
            "pass --corpus PATH",
            file=sys.stderr,
        )
        return 2
    groups = {
        "core cases": cases,
        "extended/aider_history": args.corpus / "extended" / "aider_history",
    }
    for naive in (True, False):
        label = "naive exact-match applier" if naive else "heph edit_file / patch_file"
        for group, folder in groups.items():
            if not folder.is_dir():
                continue
            results = [run_case(case, naive=naive) for case in case_folders(folder)]
            table(f"{label}: {group}", results)
            for result in results:
                if args.verbose or not result.passed:
                    mark = "ok  " if result.passed else "FAIL"
                    print(
                        f"    {mark} {result.case_id} [{result.expected}] {result.verdict}: "
                        f"{result.detail[:110]}"
                    )
    if args.generated:
        generated(args.verbose)
    timing()
    print(
        "\ncorrect: the files equal expected/; refused: the tool declined and changed nothing;"
        "\nwrong: a file differs from expected (the number that must stay 0); passed: correct"
        " for apply cases, refused for reject cases, parsed for parse cases."
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
