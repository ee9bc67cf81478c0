"""The desktop window of GPU Training Monitor. Depends on `core`; `core` never imports this package."""
