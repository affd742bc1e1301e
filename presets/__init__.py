"""Built-in data: hardware specs, grid carbon intensities, PUE classes, sample scenarios."""
