"""Everything a person sees: rendering, approval prompts (and later the REPL)."""
