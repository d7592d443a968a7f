"""manage.py post "text": publish a post, unless it is a near-duplicate."""

from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from ndd import NearDuplicateError, near_duplicates_raised
from posts.models import Post


class Command(BaseCommand):
    help = 'Publish a post; a near-duplicate of an existing post is refused.'

    def add_arguments(self, parser):
        parser.add_argument('body')

    def handle(self, *args, body, **options):
        try:
            with near_duplicates_raised(), transaction.atomic():
                post = Post.objects.create(body=body)
        except NearDuplicateError as refused:
            original = Post.objects.get(pk=refused.existing_id)
            raise CommandError('refused: near-duplicate of post #%s (similarity %s, threshold %s): %r'
                               % (refused.existing_id, refused.similarity, refused.threshold,
                                  original.body))
        self.stdout.write('published post #%d' % post.id)
