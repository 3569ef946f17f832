"""The Agent Client Protocol: editors drive heph over stdin/stdout (`heph acp`)."""
