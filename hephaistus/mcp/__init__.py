"""MCP: the person's and the workspace's tool servers, started on first use, placed in the sandbox
or (when the person says so) on the host, their tools offered as heph's own under the same
policy, and the paths a call may send them. The `[mcp_servers]` table itself is in `settings`.

May import: `settings`, `runtime`, `workspace`, `records`, `tools`.
"""
