"""The tessera API's routers: each maps one resource's domain answers to HTTP (see ``tessera.plugin.api.app``)."""
