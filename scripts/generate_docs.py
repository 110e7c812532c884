"""Regenerate docs/rules/*.md and the README's rule table from the rules' docstrings.

Usage: python scripts/generate_docs.py [--check]   (--check: exit 1 if anything is out of date)
"""

import sys
from pathlib import Path

from bcast_lint.docs import generated_files

ROOT = Path(__file__).resolve().parent.parent


def main(argv: list[str]) -> int:
    stale = [path for path, text in generated_files(ROOT).items()
             if not path.exists() or path.read_text(encoding="utf-8") != text]
    if "--check" in argv:
        for path in stale:
            print(f"out of date: {path.relative_to(ROOT)}")
        return 1 if stale else 0
    for path in stale:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(generated_files(ROOT)[path], encoding="utf-8")
        print(f"wrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
