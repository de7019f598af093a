"""The host's side of the guest server: the guest API as a protocol, the HTTP client, and its
transport (unix socket or TCP, kept alive)."""
