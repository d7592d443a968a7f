from django.db import models
from django.db.models import Value

from ndd.django import MinHashField, MinHashIndex, MinHashSketch

SHINGLE_SIZE = 3


class Post(models.Model):
    """A post whose sketch the server makes from its body on save; the
    migration puts ndd's insert guard on the table."""

    body = models.TextField()
    sketch = MinHashField(null=True, editable=False)

    class Meta:
        indexes = [
            # the guard looks near-duplicates up through it; it must serve
            # the guard's threshold exactly (threshold <= the guard's)
            MinHashIndex(fields=['sketch'], name='posts_post_sketch', threshold=0.8,
                         shingle_size=SHINGLE_SIZE, fastupdate=False),
        ]

    def save(self, *args, **kwargs):
        # the guard fires BEFORE INSERT: the sketch must be in the row it checks
        self.sketch = MinHashSketch(Value(self.body), shingle_size=SHINGLE_SIZE)
        super().save(*args, **kwargs)
        self.refresh_from_db(fields=['sketch'])
