"""The buffet (thesis §6.2, Fig. 6.5): its ports, configuration and reference behaviour
(:mod:`.spec`, Amaranth-free) and its RTL (:class:`Buffet`, loaded on first use)."""
from .._lazy import lazy_exports
from .spec import BuffetConfig, BuffetModel, BuffetParams, buffet_ports, requests

__getattr__ = lazy_exports(__name__, {"Buffet": ".buffet"})

__all__ = ["Buffet", "BuffetConfig", "BuffetModel", "BuffetParams", "buffet_ports", "requests"]
