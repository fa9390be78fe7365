"""The root of every exception yiem raises, so callers can catch a whole family at once."""


class YiemError(Exception):
    """Base class of every error raised by yiem; its message is written for the person using the app."""
