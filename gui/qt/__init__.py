"""Qt building blocks this app adds: the one background-thread task, torch imported behind the window, spin
boxes the stock ones lack, asset paths, file dialogs that never open a file, core's messages through Qt's
translator, numbers in the user's locale, the one redraw throttle the plots share, garbage collection on the
GUI thread for the workers, the window's colours by name (palette), and whether
the window can open here at all (availability: plain Python, asked before Qt loads).

May import: core (any package). The lowest gui layer.
"""
