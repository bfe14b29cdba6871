output "cluster_uri" {
  description = "Query endpoint of the cluster (the benchmark's host)."
  value       = azurerm_kusto_cluster.adx.uri
}

output "data_ingestion_uri" {
  description = "Ingestion endpoint of the cluster (queued ingestion)."
  value       = azurerm_kusto_cluster.adx.data_ingestion_uri
}

output "database_name" {
  description = "Database the benchmark writes to."
  value       = azurerm_kusto_database.benchmark.name
}

output "tenant_id" {
  description = "Azure AD tenant of the service principal (ADX_TENANT_ID)."
  value       = data.azurerm_client_config.current.tenant_id
}

output "application_id" {
  description = "Client (application) id of the service principal (ADX_CLIENT_ID)."
  value       = data.azuread_service_principal.benchmark.client_id
}
