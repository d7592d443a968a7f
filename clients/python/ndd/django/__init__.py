"""ndd for Django (PostgreSQL backend): fields, the __similar lookup,
expressions, GIN indexes and migration operations.

    from ndd.django import MinHashField, MinHashIndex, Similarity, SimilarityDistance
"""

from .fields import MinHashBbitField, MinHashField, SimHashField
from .functions import (HammingDistance, MinHashSketch, Similar, Similarity, SimilarityDistance,
                        SimHashSketch)
from .indexes import MinHashIndex, SimHashIndex
from .operations import MaintainClusters, NddExtension, RejectNearDuplicates

__all__ = ['MinHashField', 'MinHashBbitField', 'SimHashField', 'Similarity', 'SimilarityDistance',
           'HammingDistance', 'Similar', 'MinHashSketch', 'SimHashSketch', 'MinHashIndex',
           'SimHashIndex', 'NddExtension', 'RejectNearDuplicates', 'MaintainClusters']
