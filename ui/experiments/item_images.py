"""Images of a dataset item: pick an item, attach picture files to it (sent after its input), or
remove them."""

from __future__ import annotations

import streamlit as st

from ui.messages import IMAGE_TYPES, draw_blocks, uploaded_image
from ui.state import EDITOR_VERSION, EXPERIMENT_WIDGET_PREFIX, experiment_widget
from yiem.experiments import DatasetError, DatasetItem, ExperimentDraft
from yiem.model_setup import ImageDataError, check_image
from yiem.types import ImageContent

ITEM = experiment_widget("image_item").name


def _label(item: DatasetItem) -> str:
    count = f" · {len(item.images)} image{'s' if len(item.images) != 1 else ''}" if item.images else ""
    return f"{item.id} · {item.input[:40]}{count}"


def draw_item_images(draft: ExperimentDraft) -> None:
    """The expander: the picked item's images, a file uploader to add more, a button to remove them."""
    with st.expander("Images of an item", icon=":material/image:"):
        items = {item.id: item for item in draft.dataset.items}
        if not items:
            st.caption("Add an item first; then attach images to it here.")
            return
        picked = st.selectbox("Item", list(items), format_func=lambda key: _label(items[key]), key=ITEM)
        item = items[picked or next(iter(items))]
        if item.images:
            draw_blocks(list(item.images))
        # The uploader's key changes after each attach, so it comes back empty.
        version = EDITOR_VERSION.get(0)
        files = st.file_uploader(
            "Image files",
            type=IMAGE_TYPES,
            accept_multiple_files=True,
            key=f"{EXPERIMENT_WIDGET_PREFIX}image_files_{version}",
            help="Sent to the model after the item's input text; the variant's model must take images",
        )
        attach, remove = st.columns(2)
        if attach.button(
            "Attach",
            key=f"{EXPERIMENT_WIDGET_PREFIX}attach_images",
            icon=":material/attach_file:",
            disabled=not files,
        ):
            new = [uploaded_image(file) for file in files or []]
            for file, image in zip(files or [], new, strict=True):
                try:
                    check_image(image)
                except ImageDataError as error:
                    st.error(f"{file.name} was not attached: {error}.")
                    return
            if _set_images(draft, item, [*item.images, *new]):
                experiment_widget("images_attached").set(len(new))
                st.rerun()
        if remove.button(
            "Remove its images",
            key=f"{EXPERIMENT_WIDGET_PREFIX}remove_images",
            icon=":material/delete:",
            disabled=not item.images,
        ) and _set_images(draft, item, []):
            st.rerun()
        attached = experiment_widget("images_attached").pop()
        if attached is not None:
            st.success(f"Attached {attached} image{'s' if attached != 1 else ''} to {item.id}.")


def _set_images(draft: ExperimentDraft, item: DatasetItem, images: list[ImageContent]) -> bool:
    try:
        draft.dataset = draft.dataset.with_images(item.id, images)
    except DatasetError as error:
        st.error(str(error))
        return False
    # The table is drawn again from the draft, so its images column counts the new ones.
    EDITOR_VERSION.set(EDITOR_VERSION.get(0) + 1)
    return True
