"""The runtime: every process heph starts, its own and the model's, and what decides whether one
runs. The executor (the one place a process starts), the sandbox (bubblewrap) and what it hides,
heph's own programs and its git runner, the run's policy (mode, approvals, who is asked) and the
journal of effects. Tools call into it; the tool runner that calls tools is `engine.runner`.

May import: `settings`.
"""
