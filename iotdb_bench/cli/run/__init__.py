"""Running: a run spec handed to a platform (local processes or a helm release), followed until its report."""
