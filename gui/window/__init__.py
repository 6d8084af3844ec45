"""The main window's collaborators, one concern each: the File › Export actions, the menus, the
saved layout, the status bar's load and compute progress, the recent files and dropped files.
``gui.main_window.MainWindow`` builds them and wires them to the session and the panels."""

APP_NAME = "Warpline"
