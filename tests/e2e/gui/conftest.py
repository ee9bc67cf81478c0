"""The window's fixtures (a window with its own settings file, the QThread-leak guard, the C locale) for the
end-to-end tests of the window: the same as tests/gui has."""

from tests.gui.conftest import *  # noqa: F403
