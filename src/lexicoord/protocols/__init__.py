"""Protocols: the rules of play, one package each, registered through the ``lexicoord.protocols`` entry points.

The contract they implement (``Protocol``, ``EpisodeContext``, requests and seats,
events and audiences) is :mod:`lexicoord.core`.
"""
