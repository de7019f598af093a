"""Watching a desktop live, taking it over, and doing a task yourself (``--live``,
``--pause-on-fail``, ``--agent=human``).

:mod:`~pytest_osworld.live.server` serves one desktop's view on the host's loopback;
:mod:`~pytest_osworld.live.session` ties it to a pytest run (one view per worker, the
links in the terminal, taking over through the desktop's VNC server). The VNC server
itself is the guest's (:mod:`pytest_osworld.guest.vnc`), reached through the guest server.
"""
