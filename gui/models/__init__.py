"""Qt item models: thin adapters over the engine's Many-BSP containers."""
