"""Chat avatars as small inline pictures, so no icon name ("face", "smart_toy") is part of a message's text.

Streamlit draws its default avatars and `:material/…:` ones as icon-font ligatures: the icon's name is
text in the page, so it is copied with a message and read out by tools that read the page's text.
A picture has an empty alt text instead, the right thing for a decoration beside a labelled message.
"""

from __future__ import annotations

# Streamlit's own avatar colours (red for the person, orange for the assistant), a white figure.
_FRAME = (
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24">'
    '<rect width="24" height="24" rx="6" fill="{}"/>{}</svg>'
)

USER = _FRAME.format(
    "#ff4b4b",
    '<circle cx="12" cy="9" r="4" fill="#fff"/>'
    '<path d="M4.5 20.5c.6-4 3.6-6 7.5-6s6.9 2 7.5 6z" fill="#fff"/>',
)
ASSISTANT = _FRAME.format(
    "#ffa421",
    '<path d="M12 3.5v3" stroke="#fff" stroke-width="1.6" stroke-linecap="round"/>'
    '<rect x="5" y="7" width="14" height="11" rx="3" fill="#fff"/>'
    '<circle cx="9.5" cy="12.5" r="1.5" fill="#ffa421"/><circle cx="14.5" cy="12.5" r="1.5" fill="#ffa421"/>',
)
# A wrench, for tool results drawn on their own.
TOOL = _FRAME.format(
    "#808495",
    '<path d="M19.3 16.9l-6-6c.6-1.5.3-3.3-1-4.6-1.3-1.3-3.3-1.6-4.9-.9l2.9 2.9-2 2-2.9-2.9c-.8 1.6-.4 3.6'
    '.9 4.9 1.3 1.3 3 1.6 4.6 1l6 6c.3.3.7.3.9 0l1.5-1.5c.3-.2.3-.6 0-.9z" fill="#fff"/>',
)
