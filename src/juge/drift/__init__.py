"""Judge drift on a human-labelled anchor set (``juge drift``): the old and the new judge on the same fixed items,
their agreement with people and the paired difference, and how much of a score change the judge accounts for."""
