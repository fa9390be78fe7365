"""The sidebar's library: saved setups (presets) applied in one click, and saved prompts whose
`{{variables}}` a small form asks for before the prompt is sent."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import streamlit as st

from ui import bootstrap
from ui.chat import settings as chat_settings
from ui.state import (
    FILLED_PROMPT,
    LIBRARY_PROBLEM,
    PRESET_NAME,
    PROMPT_FORM,
    PROMPT_NAME,
    PROMPT_TEXT,
    UNSENT,
    prompt_var,
)
from yiem.amounts import tokens
from yiem.chat import ChatLibrary, SavedPrompt
from yiem.model_setup import ModelSetup, Preset, fill_template
from yiem.safe_markdown import safe_markdown
from yiem.store import StoreError

T = TypeVar("T")


def describe(setup: ModelSetup) -> str:
    """A preset's setup in one line: provider/model, sampling, tools."""
    parts = [setup.label]
    if setup.temperature is not None:
        parts.append(f"temperature {setup.temperature:g}")
    if setup.max_tokens:
        parts.append(f"at most {tokens(setup.max_tokens)} tokens")
    if setup.tools:
        parts.append(f"{len(setup.tools)} tool{'s' if len(setup.tools) > 1 else ''} ({setup.tool_execution})")
    if setup.system_prompt:
        parts.append("a system prompt")
    return " · ".join(parts)


def _run(action: Any, *args: Any) -> bool:
    try:
        action(*args)
    except StoreError as error:
        LIBRARY_PROBLEM.set(str(error))
        return False
    LIBRARY_PROBLEM.pop()
    return True


def _delete(action: Callable[[str], None], name: str) -> None:
    _run(action, name)


def _apply(preset: Preset) -> None:
    chat_settings.restore(preset.setup)
    st.toast(f"Now chatting with “{preset.name}”: {describe(preset.setup)}.", icon=":material/bookmark:")


def _save_preset(library: ChatLibrary) -> None:
    if _run(library.save_preset, PRESET_NAME.get(""), chat_settings.current_setup()):
        PRESET_NAME.set("")


def _save_prompt(library: ChatLibrary) -> None:
    name, text = PROMPT_NAME.get(""), PROMPT_TEXT.get("")
    if _run(library.save_prompt, name, text):
        PROMPT_NAME.set("")
        PROMPT_TEXT.set("")


def _use_prompt(prompt: SavedPrompt) -> None:
    if prompt.variables:
        PROMPT_FORM.set(prompt)
    else:  # nothing to ask: it goes into the message box, to send or change first
        UNSENT.set(prompt.text)


def _problem() -> None:
    if problem := LIBRARY_PROBLEM.get():
        st.error(problem)


def _read(read: Callable[[], list[T]], what: str) -> list[T]:
    try:
        return read()
    except StoreError as error:
        st.error(f"The saved {what} could not be read: {error}")
        return []


def _rows(
    key: str,
    items: list[T],
    label: Callable[[T], tuple[str, str]],
    use: Callable[[T], None],
    delete: Callable[[str], None],
) -> None:
    """One row per saved item: a button that uses it (`label` gives its name and tooltip), and Delete."""
    for index, item in enumerate(items):
        name, tooltip = label(item)
        left, right = st.columns([5, 2], vertical_alignment="center")
        left.button(name, key=f"{key}-use-{index}", help=tooltip, width="stretch", on_click=use, args=(item,))
        right.button(
            "Delete", key=f"{key}-delete-{index}", type="tertiary", on_click=_delete, args=(delete, name)
        )


def _presets(library: ChatLibrary) -> None:
    with st.expander("Saved setups", icon=":material/bookmarks:"):
        presets = _read(library.presets, "setups")
        if not presets:
            st.caption("None yet: choose a model and settings above, then save them here under a name.")
        _rows(
            "preset",
            presets,
            lambda preset: (preset.name, f"Use this setup: {describe(preset.setup)}"),
            _apply,
            library.delete_preset,
        )
        st.text_input("Name", key=PRESET_NAME.name, placeholder="e.g. Careful reviewer")
        st.button(
            "Save the current setup",
            key="preset-save",
            icon=":material/bookmark_add:",
            help="Provider, model, system prompt, temperature, longest reply and tools (never a key)",
            on_click=_save_preset,
            args=(library,),
        )


def _prompts(library: ChatLibrary) -> None:
    with st.expander("Saved prompts", icon=":material/library_books:"):
        prompts = _read(library.prompts, "prompts")
        if not prompts:
            st.caption("None yet: save a prompt you use often; {{name}} marks what changes each time.")
        # A tooltip is Markdown: made safe, so no image loads from afar.
        _rows(
            "prompt",
            prompts,
            lambda prompt: (prompt.name, safe_markdown(prompt.text[:300])),
            _use_prompt,
            library.delete_prompt,
        )
        st.text_input("Name", key=PROMPT_NAME.name, placeholder="e.g. Summarise")
        st.text_area("Prompt", key=PROMPT_TEXT.name, placeholder="Summarise {{text}} in {{words}} words.")
        st.button(
            "Save the prompt",
            key="prompt-save",
            icon=":material/bookmark_add:",
            on_click=_save_prompt,
            args=(library,),
        )


def draw() -> None:
    """The two sections, in the sidebar."""
    library = bootstrap.library()
    _presets(library)
    _prompts(library)
    _problem()


def _close_form() -> None:
    PROMPT_FORM.pop()


@st.dialog("Fill in the prompt", on_dismiss=_close_form)
def _form(prompt: SavedPrompt) -> None:
    st.caption(prompt.name)
    st.text(prompt.text[:600])  # as typed: a prompt's Markdown is not drawn here
    with st.form("prompt-form", border=False):
        values = {name: st.text_area(name, key=prompt_var(name).name, height=68) for name in prompt.variables}
        with st.container(horizontal=True):
            send = st.form_submit_button("Send", type="primary", key="prompt-form-send")
            fill = st.form_submit_button("Put it in the message box", key="prompt-form-fill")
    if not (send or fill):
        return
    missing = [name for name, value in values.items() if not value.strip()]
    if missing:
        st.error(f"Fill in {', '.join(missing)} first.")
        return
    text = fill_template(prompt.text, values)
    _close_form()
    for name in prompt.variables:
        prompt_var(name).pop()
    (FILLED_PROMPT if send else UNSENT).set(text)
    st.rerun()


def draw_form() -> None:
    """The open prompt's form, if one is open (call outside the sidebar)."""
    prompt = PROMPT_FORM.get()
    if isinstance(prompt, SavedPrompt):
        _form(prompt)
