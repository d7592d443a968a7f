from django.db import migrations

import ndd.django.operations


class Migration(migrations.Migration):

    dependencies = [
        ('nddtest', '0001_initial'),
    ]

    operations = [
        ndd.django.operations.RejectNearDuplicates(model_name='article', field='sketch', threshold=0.8),
        ndd.django.operations.MaintainClusters(model_name='story', field='sketch', threshold=0.7,
                                               representative_order='length(body) DESC'),
    ]
