//! Linear temporal logic: formulas and their progression over a run.
