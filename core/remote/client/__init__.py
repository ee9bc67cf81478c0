"""The client: this machine's side of a connection to an agent (ssh transport, link, following runs and jobs into the
local store)."""
