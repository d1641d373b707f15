"""Judge policies: derive on dev, test once on holdout, route new items, audit."""
