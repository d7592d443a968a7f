"""Models of the Django tests: one table under the insert guard, one under
live clusters."""

from django.db import models

from ndd.django import MinHashBbitField, MinHashField, MinHashIndex, SimHashField, SimHashIndex


class Article(models.Model):
    body = models.TextField()
    sketch = MinHashField(null=True)
    sketch4 = MinHashBbitField(null=True)
    fp = SimHashField(null=True)

    class Meta:
        db_table = 'nddtest article'      # a name that must be quoted everywhere
        indexes = [
            MinHashIndex(fields=['sketch'], name='nddtest_article_sketch', threshold=0.7,
                         shingle_size=2, fastupdate=False),
            SimHashIndex(fields=['fp'], name='nddtest_article_fp', max_distance=4),
        ]


class Story(models.Model):
    body = models.TextField()
    sketch = MinHashField(null=True)

    class Meta:
        indexes = [MinHashIndex(fields=['sketch'], name='nddtest_story_sketch', threshold=0.7)]
