"""The window's side of a machine reached over SSH (`core.remote`): the connection (an `AgentLink` whose blocking
calls run off the GUI thread, reconnecting with back-off), the Connect dialog with the recent hosts, the status
bar's "HOST · 23 ms", and the remote devices as the form lists them. Imports core, gui.i18n and gui.qt only: the
form, the launcher, the device watch and the window build on it.
"""
