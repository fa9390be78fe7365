"""The browser app's Streamlit side: session bootstrap, page parts, and the pages themselves.

Everything here draws and calls `yiem`; `yiem` never imports this package. The pages live in
`ui/pages/` rather than a top-level `pages/` folder, because Streamlit treats a `pages/` folder
beside `app.py` as its older folder navigation and shows that, without the app's shell, to a
browser that opens a deep link such as `/costs` before `app.py` has run.
"""
