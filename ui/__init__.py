"""The Qt application. The only layer that imports PySide6 or pyqtgraph."""
