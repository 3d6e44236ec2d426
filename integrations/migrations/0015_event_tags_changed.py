from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('integrations', '0014_incluir_blocks'),
    ]

    operations = [
        migrations.AlterField(
            model_name='webhookevent',
            name='kind',
            field=models.CharField(choices=[('ticket.criado', 'Ticket criado'), ('ticket.resposta_publica', 'Resposta pública'), ('ticket.resposta_editada', 'Resposta editada'), ('ticket.status_alterado', 'Status alterado'), ('ticket.resolvido', 'Ticket resolvido'), ('ticket.prioridade_alterada', 'Prioridade alterada'), ('ticket.atribuido', 'Ticket atribuído'), ('ticket.tags_alteradas', 'Tags alteradas'), ('ticket.anexo_adicionado', 'Anexo adicionado'), ('ticket.excluido', 'Ticket excluído'), ('contato.anonimizado', 'Contato anonimizado'), ('webhook.teste', 'Teste')], max_length=40, verbose_name='evento'),
        ),
    ]
