// The book's interactive explorers (see CONTRIBUTING.md, "Interactives"). Being written.
