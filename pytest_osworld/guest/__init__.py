"""The guest server that runs inside every desktop (OSWorld's in-VM API, hardened).

It depends only on the Python standard library, pyatspi, python-xlib, pyautogui, Pillow
and mss (plus fpng, optional, for faster screenshots), so the same package serves the
local sandbox and a VM image. Run it with
``python -m pytest_osworld.guest --token-file F (--unix-socket PATH | --port N)``.
"""
