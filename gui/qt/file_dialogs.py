"""The window's file dialogs, built so that browsing never opens a file.

Why: Qt's own (non-native) file dialog asks a file icon provider for each entry's icon and type, and the
default provider finds both through the MIME database, which opens files whose name does not settle their
type (a run store's `-wal` and `-shm` among them) and closes them again. Closing *any* descriptor of a file
drops every POSIX lock the process holds on it, SQLite's included: the next other process to close the run
store then believes it is the last user and deletes the `-wal` and `-shm` files this window still has mapped,
and the window loses its runs. Every dialog here uses `NameOnlyIconProvider`, which answers from the name and
`stat()` alone, and Qt's own dialog (a platform's native one sniffs files in the same way, out of our reach).

The three functions mirror `QFileDialog`'s static ones (same arguments, same results), so callers and tests
use them as they would Qt's.
"""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication, QFileInfo
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QDialog, QFileDialog, QFileIconProvider, QWidget


class NameOnlyIconProvider(QFileIconProvider):
    """Icons and type names from the entry's kind (folder or file) and its suffix: no file is opened."""

    def icon(self, what: object) -> QIcon:  # type: ignore[override]
        if isinstance(what, QFileInfo):
            kind = QFileIconProvider.IconType.Folder if what.isDir() else QFileIconProvider.IconType.File
            return super().icon(kind)
        return super().icon(what)  # an IconType: the style's own icon

    def type(self, info: QFileInfo) -> str:  # type: ignore[override]
        if info.isDir():
            return QCoreApplication.translate("FileDialogs", "Folder")
        suffix = info.suffix()
        if suffix:
            return QCoreApplication.translate("FileDialogs", "{suffix} file").format(suffix=suffix.upper())
        return QCoreApplication.translate("FileDialogs", "File")


_PROVIDER: NameOnlyIconProvider | None = None  # one for every dialog: QFileDialog does not own its provider


def install_safe_icons(dialog: QFileDialog) -> None:
    """Make `dialog` (Qt's own, not the platform's) name its entries without opening them."""
    global _PROVIDER
    if _PROVIDER is None:
        _PROVIDER = NameOnlyIconProvider()
    dialog.setOption(QFileDialog.Option.DontUseNativeDialog, True)
    dialog.setOption(QFileDialog.Option.DontUseCustomDirectoryIcons, True)  # those read a .directory file
    dialog.setIconProvider(_PROVIDER)


def _dialog(
    parent: QWidget | None, caption: str, folder: str, name_filter: str, options: QFileDialog.Option
) -> QFileDialog:
    dialog = QFileDialog(parent, caption, folder, name_filter)
    dialog.setOptions(options)
    install_safe_icons(dialog)
    return dialog


def _run(dialog: QFileDialog) -> tuple[str, str]:
    try:
        if dialog.exec() != QDialog.DialogCode.Accepted or not dialog.selectedFiles():
            return "", ""
        return dialog.selectedFiles()[0], dialog.selectedNameFilter()
    finally:
        dialog.deleteLater()


def get_open_file_name(
    parent: QWidget | None = None,
    caption: str = "",
    folder: str = "",
    name_filter: str = "",
    options: QFileDialog.Option = QFileDialog.Option(0),
) -> tuple[str, str]:
    """An existing file to read, and the name filter chosen; ("", "") when cancelled."""
    dialog = _dialog(parent, caption, folder, name_filter, options)
    dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptOpen)
    dialog.setFileMode(QFileDialog.FileMode.ExistingFile)
    return _run(dialog)


def get_save_file_name(
    parent: QWidget | None = None,
    caption: str = "",
    folder: str = "",
    name_filter: str = "",
    options: QFileDialog.Option = QFileDialog.Option(0),
) -> tuple[str, str]:
    """A file to write (Qt asks before replacing one unless `DontConfirmOverwrite`), and the name filter chosen;
    ("", "") when cancelled."""
    dialog = _dialog(parent, caption, folder, name_filter, options)
    dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
    dialog.setFileMode(QFileDialog.FileMode.AnyFile)
    return _run(dialog)


def get_existing_directory(
    parent: QWidget | None = None,
    caption: str = "",
    folder: str = "",
    options: QFileDialog.Option = QFileDialog.Option.ShowDirsOnly,
) -> str:
    """An existing folder; "" when cancelled."""
    dialog = _dialog(parent, caption, folder, "", options)
    dialog.setFileMode(QFileDialog.FileMode.Directory)
    return _run(dialog)[0]
