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

from hephaistus.testing.edit_corpus import CaseResult, case_folders, run_case, summarise

DEFAULT_CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "edits"
COLUMNS = ("cases", "correct", "kept-whitespace", "refused", "wrong", "skipped", "parsed",
           "passed")


def table(title: str, results: list[CaseResult]) -> None:
    rows = summarise(results)
    print(f"\n{title}")
    widths = [max(9, len(c) + 2) for c in COLUMNS]
    print(f"  {'format':<22}" + "".join(f"{c:>{w}}" for c, w in zip(COLUMNS, widths, strict=True)))
    for name in sorted(rows, key=lambda n: (n == "all", n)):
        print(f"  {name:<22}" + "".join(f"{rows[name][c]:>{w}}"
                                        for c, w in zip(COLUMNS, widths, strict=True)))


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--verbose", action="store_true", help="list every case")
    args = parser.parse_args()
    cases = args.corpus / "cases"
    if not cases.is_dir():
        print(f"no edit corpus at {args.corpus} (expected cases/ and extended/ there); "
              "pass --corpus PATH", file=sys.stderr)
        return 2
    groups = {"core cases": cases, "extended/aider_history": args.corpus / "extended" /
              "aider_history"}
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
                    print(f"    {mark} {result.case_id} [{result.expected}] {result.verdict}: "
                          f"{result.detail[:110]}")
    print("\ncorrect: the files equal expected/; refused: the tool declined and changed nothing;"
          "\nwrong: a file differs from expected (the number that must stay 0); passed: correct"
          " for apply cases, refused for reject cases, parsed for parse cases.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
