"""Dock and central panels of the main window (views over gui.session.Session)."""
