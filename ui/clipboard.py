"""A one-click "Copy" button that puts a text on the clipboard in the browser, without a rerun."""

from __future__ import annotations

import streamlit as st

_HTML = '<button type="button" class="yiem-copy"></button>'
_CSS = """
.yiem-copy {
    background: none;
    border: none;
    padding: 0.25rem 0;
    color: var(--st-text-color);
    font: inherit;
    font-size: 0.875rem;
    cursor: pointer;
}
.yiem-copy:hover, .yiem-copy:focus-visible { color: var(--st-primary-color); text-decoration: underline; }
"""
# Plain browser code, no rerun: the text travels as data (never as HTML), and the label says when
# the browser refused the clipboard (a page served over plain http to another machine).
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

export default function ({ parentElement, data }) {
    const button = parentElement.querySelector("button");
    button.textContent = data.label;
    button.onclick = async () => {
        try {
            await write(data.text);
            button.textContent = "Copied";
        } catch (error) {
            button.textContent = "The browser did not allow copying";
        }
        setTimeout(() => { button.textContent = data.label; }, 2000);
    };
}
"""

_copy = st.components.v2.component("yiem_copy", html=_HTML, css=_CSS, js=_JS)


def copy_button(text: str, label: str, key: str) -> None:
    """A button labelled `label` that copies `text` (as it is: Markdown stays Markdown)."""
    _copy(key=key, data={"text": text, "label": label}, width="content")
