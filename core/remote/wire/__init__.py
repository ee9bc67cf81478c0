"""The wire: what the agent and the client both read (the protocol's lines, compact rows, core values as JSON)."""
