"""One-click "Copy" buttons that put a text on the clipboard in the browser, without a rerun."""

from __future__ import annotations

import base64
import html

import streamlit as st

# Each button is plain HTML and one listener on the page serves them all: a custom component per
# button registered two widgets each, and every session-state read then presented all of them
# (about 2 s a rerun with 1,000 messages shown). The listener's styles are not isolated, so they
# reach the buttons; a button stays hidden until the listener runs, so no click goes unheard.
_CSS = """
.yiem-copy-ready .yiem-copy {
    display: inline-block !important;
    background: none;
    border: none;
    padding: 0.25rem 0;
    color: inherit;
    font: inherit;
    font-size: 0.875rem;
    cursor: pointer;
}
.yiem-copy:hover, .yiem-copy:focus-visible { text-decoration: underline; }
"""
# Plain browser code, no rerun: the text travels as base64 in an attribute (never as HTML, and the
# sanitiser keeps it whatever it holds), and the label says when the browser refused the
# clipboard (a page served over plain http to another machine).
_JS = """
async function write(text) {
    if (navigator.clipboard && window.isSecureContext) {
        await navigator.clipboard.writeText(text);
        return;
    }
    const area = document.createElement("textarea");
    area.value = text;
    area.setAttribute("readonly", "");
    area.style.position = "fixed";
    area.style.opacity = "0";
    document.body.appendChild(area);
    area.select();
    const done = document.execCommand("copy");
    area.remove();
    if (!done) throw new Error("copy refused");
}

function decode(encoded) {
    const bytes = Uint8Array.from(atob(encoded), (char) => char.charCodeAt(0));
    return new TextDecoder().decode(bytes);
}

async function copy(event) {
    const button = event.target instanceof Element ? event.target.closest("button.yiem-copy") : null;
    if (!button) return;
    try {
        await write(decode(button.dataset.copy));
        button.textContent = "Copied";
    } catch (error) {
        button.textContent = "The browser did not allow copying";
    }
    setTimeout(() => { button.textContent = button.dataset.label; }, 2000);
}

export default function ({ parentElement }) {
    const page = parentElement.ownerDocument;
    page.addEventListener("click", copy);
    page.documentElement.classList.add("yiem-copy-ready");
    return () => {
        page.documentElement.classList.remove("yiem-copy-ready");
        page.removeEventListener("click", copy);
    };
}
"""

_listener = st.components.v2.component("yiem_copy", html="", css=_CSS, js=_JS, isolate_styles=False)


def listen_for_copies() -> None:
    """The one listener that makes every Copy button of the page work; draw it once per run."""
    _listener(key="yiem-copy-listener", width="content")


def copy_button(text: str, label: str) -> None:
    """A button labelled `label` that copies `text` (as it is: Markdown stays Markdown)."""
    encoded = base64.b64encode(text.encode()).decode()
    name = html.escape(label)
    st.html(
        f'<button type="button" class="yiem-copy" style="display: none" data-copy="{encoded}" '
        f'data-label="{name}">{name}</button>',
        width="content",
    )
