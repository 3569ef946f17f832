"""The tool runtime and what it decides with: permission modes, the policy, the journal of
effects and the executor that starts processes (see runtime.runtime for the one call)."""
