"""The window's side of a machine reached over SSH (`gpu_train_monitor.remote`): the connection (an `AgentLink` whose
blocking calls run off the GUI thread, reconnecting with back-off), the Connect dialog with the recent hosts, the status
bar's "HOST · 23 ms", and the remote devices as the form lists them. Imports core, gpu_train_monitor.gui.i18n and
gpu_train_monitor.gui.qt only: the form, the launcher, the device watch and the window build on it.
"""
