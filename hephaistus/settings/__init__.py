"""Settings: what the person (and, within bounds, a workspace) says heph may do, and where heph
keeps the person's own files. The merged config and its tables (`[docs]`, `[sandbox]`,
`[mcp_servers.NAME]`), the permission modes and their one table, the approvals kept for good, the
user's config, state and cache folders.

May import: the bottom modules only.
"""
