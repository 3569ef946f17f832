"""A session's own process under `heph acp` (see hephaistus.acp.router): the AcpServer."""

from hephaistus.acp.server import main

raise SystemExit(main())
