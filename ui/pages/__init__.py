"""The app's pages, one script each that st.navigation runs; a package so the import contracts see them."""
