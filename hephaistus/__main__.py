"""`python -m hephaistus` runs the same command line as `heph`."""

from hephaistus.cli import main

raise SystemExit(main())
