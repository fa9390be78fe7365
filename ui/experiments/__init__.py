"""The Experiments page's drawing parts."""
